// Python's pickle format, read without executing anything (see the header). The opcodes are
// CPython's Lib/pickletools.py's; each is a stack operation on the values read so far.
#include "heed/io/pickle.h"

#include <bit>
#include <cstring>
#include <map>

#include "heed/util/error.h"

namespace heed::pickle {
namespace {

Value make(Object::Kind k) {
  auto v = std::make_shared<Object>();
  v->kind = k;
  return v;
}

class Machine {
 public:
  Machine(const std::string& bytes, const std::string& what) : b_(bytes), what_(what) {}

  Value run() {
    for (;;) {
      const size_t op_at = at_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      switch (op) {
        case 0x80:  // PROTO
          take(1);
          break;
        case 0x95:  // FRAME: a length; the frame's opcodes follow inline
          take(8);
          break;
        case '}':  // EMPTY_DICT
          push(make(Object::Kind::Dict));
          break;
        case ']':  // EMPTY_LIST
          push(make(Object::Kind::List));
          break;
        case ')':  // EMPTY_TUPLE
          push(make(Object::Kind::Tuple));
          break;
        case '(':  // MARK
          marks_.push_back(stack_.size());
          break;
        case 'N':
          push(make(Object::Kind::None));
          break;
        case 0x88:    // NEWTRUE
        case 0x89: {  // NEWFALSE
          Value v = make(Object::Kind::Bool);
          v->b = op == 0x88;
          push(v);
          break;
        }
        case 'K':  // BININT1
          push_int(static_cast<unsigned char>(take(1)[0]));
          break;
        case 'M':  // BININT2
          push_int(get<uint16_t>());
          break;
        case 'J':  // BININT
          push_int(get<int32_t>());
          break;
        case 0x8a: {  // LONG1: n bytes, little-endian two's complement
          const auto n = static_cast<unsigned char>(take(1)[0]);
          check_here(n <= 8, op_at, "an integer of more than 64 bits");
          const std::string d = take(n);
          uint64_t u = 0;
          for (size_t k = 0; k < n; ++k)
            u |= static_cast<uint64_t>(static_cast<unsigned char>(d[k])) << (8 * k);
          if (n > 0 && n < 8 && (static_cast<unsigned char>(d[n - 1]) & 0x80))
            u |= ~uint64_t{0} << (8 * n);
          push_int(static_cast<int64_t>(u));
          break;
        }
        case 'G': {  // BINFLOAT: big-endian double
          uint64_t u = 0;
          for (char c : take(8)) u = (u << 8) | static_cast<unsigned char>(c);
          Value v = make(Object::Kind::Float);
          v->f = std::bit_cast<double>(u);
          push(v);
          break;
        }
        case 0x8c:  // SHORT_BINUNICODE
          push_str(Object::Kind::Str, static_cast<unsigned char>(take(1)[0]));
          break;
        case 'X':  // BINUNICODE
          push_str(Object::Kind::Str, get<uint32_t>());
          break;
        case 0x8d:  // BINUNICODE8
          push_str(Object::Kind::Str, get<uint64_t>());
          break;
        case 'C':  // SHORT_BINBYTES
          push_str(Object::Kind::Bytes, static_cast<unsigned char>(take(1)[0]));
          break;
        case 'B':  // BINBYTES
          push_str(Object::Kind::Bytes, get<uint32_t>());
          break;
        case 'q':  // BINPUT
          memo_[static_cast<unsigned char>(take(1)[0])] = top(op_at);
          break;
        case 'r':  // LONG_BINPUT
          memo_[get<uint32_t>()] = top(op_at);
          break;
        case 0x94:  // MEMOIZE
          memo_[memo_.size()] = top(op_at);
          break;
        case 'h':  // BINGET
          push(memo(static_cast<unsigned char>(take(1)[0]), op_at));
          break;
        case 'j':  // LONG_BINGET
          push(memo(get<uint32_t>(), op_at));
          break;
        case 't': {  // TUPLE
          Value t = make(Object::Kind::Tuple);
          t->items = pop_mark(op_at);
          push(t);
          break;
        }
        case 0x85:    // TUPLE1
        case 0x86:    // TUPLE2
        case 0x87: {  // TUPLE3
          const size_t n = op - 0x84u;
          check_here(stack_.size() >= n, op_at, "a tuple of more values than the stack holds");
          Value t = make(Object::Kind::Tuple);
          t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          push(t);
          break;
        }
        case 'a': {  // APPEND
          Value x = pop(op_at);
          Value list = top(op_at);
          check_here(list->kind == Object::Kind::List, op_at, "APPEND to a ", list->kind_name());
          list->items.push_back(x);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<Value> xs = pop_mark(op_at);
          Value list = top(op_at);
          check_here(list->kind == Object::Kind::List, op_at, "APPENDS to a ", list->kind_name());
          list->items.insert(list->items.end(), xs.begin(), xs.end());
          break;
        }
        case 's': {  // SETITEM
          Value v = pop(op_at), k = pop(op_at);
          set_items(top(op_at), {k, v}, op_at);
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<Value> kv = pop_mark(op_at);
          set_items(top(op_at), kv, op_at);
          break;
        }
        case 'c': {  // GLOBAL "module\nname\n"
          std::string name = line();
          name += '.';
          name += line();  // module.name
          push_global(std::move(name));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          Value name = pop(op_at), module = pop(op_at);
          check_here(name->kind == Object::Kind::Str && module->kind == Object::Kind::Str, op_at,
                     "STACK_GLOBAL of non-strings");
          push_global(module->s + "." + name->s);
          break;
        }
        case 'R':     // REDUCE: callable(*args)
        case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
          Value args = pop(op_at), callable = pop(op_at);
          check_here(callable->kind == Object::Kind::Global && args->kind == Object::Kind::Tuple,
                     op_at, "a call of a ", callable->kind_name());
          if (callable->s == "collections.OrderedDict") {
            push(make(Object::Kind::Dict));
          } else if (callable->s == "_codecs.encode" && args->items.size() == 2 &&
                     args->items[0]->kind == Object::Kind::Str) {
            push(latin1_bytes(args->items[0]->s, op_at));  // protocol 2's bytes
          } else {
            Value c = make(Object::Kind::Call);
            c->s = callable->s;
            c->items = args->items;
            push(c);
          }
          break;
        }
        case 'b': {  // BUILD: obj.__setstate__(state), or its __dict__ updated
          Value state = pop(op_at);
          Value obj = top(op_at);
          if (obj->kind == Object::Kind::Call) obj->state = state;
          // a Dict (an OrderedDict subclass's state) keeps its items; nothing else to set
          break;
        }
        case 'Q': {  // BINPERSID
          Value pid = pop(op_at);
          Value c = make(Object::Kind::Call);
          c->s = "persid";
          c->items = {pid};
          push(c);
          break;
        }
        case '.':  // STOP
          check_here(stack_.size() == 1, op_at, "STOP with ", stack_.size(),
                     " values on the stack");
          return stack_.back();
        default:
          fail(what_, ": pickle opcode 0x", hex(op), " at byte ", op_at,
               " is not one heed reads (protocols 2 to 4)");
      }
    }
  }

 private:
  std::string take(size_t n) {
    check(n <= b_.size() && at_ <= b_.size() - n, what_, ": the pickle ends at byte ", at_,
          " inside a value");
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  template <class T>
  T get() {
    const std::string s = take(sizeof(T));
    T v;
    std::memcpy(&v, s.data(), sizeof(T));
    return v;
  }
  std::string line() {
    const size_t end = b_.find('\n', at_);
    check(end != std::string::npos, what_, ": a GLOBAL without its newline at byte ", at_);
    std::string s = b_.substr(at_, end - at_);
    at_ = end + 1;
    return s;
  }
  static std::string hex(unsigned v) {
    static constexpr char d[] = "0123456789abcdef";
    return {d[(v >> 4) & 15], d[v & 15]};
  }
  template <class... A>
  void check_here(bool ok, size_t op_at, const A&... message) const {
    check(ok, what_, ": pickle byte ", op_at, ": ", message...);
  }
  void push(Value v) { stack_.push_back(std::move(v)); }
  // codecs.encode(s, "latin1"): each code point of the UTF-8 string s (all below 256) a byte
  Value latin1_bytes(const std::string& s, size_t op_at) const {
    Value v = make(Object::Kind::Bytes);
    for (size_t k = 0; k < s.size(); ++k) {
      const auto c = static_cast<unsigned char>(s[k]);
      if (c < 0x80) {
        v->s += static_cast<char>(c);
      } else {
        check_here((c == 0xc2 || c == 0xc3) && k + 1 < s.size(), op_at,
                   "bytes pickled as a string beyond latin-1");
        v->s += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(s[++k]) & 0x3f));
      }
    }
    return v;
  }
  void push_int(int64_t i) {
    Value v = make(Object::Kind::Int);
    v->i = i;
    push(v);
  }
  void push_str(Object::Kind k, uint64_t n) {
    Value v = make(k);
    v->s = take(n);
    push(v);
  }
  void push_global(std::string name) {
    Value g = make(Object::Kind::Global);
    g->s = std::move(name);
    push(g);
  }
  Value top(size_t op_at) const {
    check_here(!stack_.empty(), op_at, "an empty stack");
    return stack_.back();
  }
  Value pop(size_t op_at) {
    check_here(stack_.size() > (marks_.empty() ? 0 : marks_.back()), op_at,
               "a value taken from an empty stack");
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<Value> pop_mark(size_t op_at) {
    check_here(!marks_.empty() && marks_.back() <= stack_.size(), op_at, "no MARK to pop to");
    std::vector<Value> out(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()),
                           stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return out;
  }
  Value memo(size_t k, size_t op_at) const {
    auto it = memo_.find(k);
    check_here(it != memo_.end(), op_at, "memo ", k, " was never put");
    return it->second;
  }
  void set_items(const Value& d, const std::vector<Value>& kv, size_t op_at) {
    check_here(d->kind == Object::Kind::Dict, op_at, "SETITEM on a ", d->kind_name());
    check_here(kv.size() % 2 == 0, op_at, "SETITEMS with an odd number of values");
    for (size_t k = 0; k < kv.size(); k += 2) d->dict.emplace_back(kv[k], kv[k + 1]);
  }

  const std::string& b_;
  const std::string& what_;
  size_t at_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::map<size_t, Value> memo_;
};

}  // namespace

Value Object::get(const std::string& key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : dict)
    if (k->kind == Kind::Str && k->s == key) return v;
  return nullptr;
}

std::string Object::kind_name() const {
  static constexpr const char* kNames[] = {"None", "bool",  "int",  "float",  "str",   "bytes",
                                           "list", "tuple", "dict", "global", "object"};
  return kNames[static_cast<int>(kind)];
}

Value load(const std::string& bytes, const std::string& what) {
  return Machine(bytes, what).run();
}

}  // namespace heed::pickle
