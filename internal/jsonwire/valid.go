package jsonwire

// Valid reports whether b is one valid JSON value (RFC 8259), surrounded by
// optional whitespace. It accepts exactly what encoding/json.Valid accepts
// (the fuzz target FuzzValidDifferential checks it against encoding/json):
//
//   - strings may hold any byte from 0x20 up, invalid UTF-8 included
//     (encoding/json replaces it when decoding, it does not reject it);
//     escapes are the RFC's, and \u takes any four hex digits (unpaired
//     surrogates included);
//   - numbers follow the RFC's grammar: no leading zeros, no leading '+',
//     no bare '.', an exponent needs digits;
//   - objects and arrays nest at most 10000 deep (encoding/json's
//     maxNestingDepth); deeper input is invalid.
//
// It is a single pass over b in a loop (no recursion): linear in len(b),
// and it allocates only beyond 64 levels of nesting, one bit per level
// (at most 10000/8 bytes for the deepest input it accepts). It is several
// times faster than encoding/json.Valid, whose scanner calls a state
// function for every byte. Safe for concurrent use.
func Valid(b []byte) bool {
	var st nesting
	i := SkipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{':
			if !st.push(true) {
				return false
			}
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == '}' {
				st.pop()
				i++
				break
			}
			if i = validKey(b, i); i < 0 {
				return false
			}
			continue
		case '[':
			if !st.push(false) {
				return false
			}
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				st.pop()
				i++
				break
			}
			continue
		case '"':
			if i = validString(b, i); i < 0 {
				return false
			}
		case 't':
			if !hasAt(b, i, "true") {
				return false
			}
			i += 4
		case 'f':
			if !hasAt(b, i, "false") {
				return false
			}
			i += 5
		case 'n':
			if !hasAt(b, i, "null") {
				return false
			}
			i += 4
		default:
			if i = validNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended before b[i]: close containers until one continues.
		for {
			i = SkipSpace(b, i)
			if st.depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			obj := st.top()
			c := b[i]
			if c == ',' {
				i = SkipSpace(b, i+1)
				if obj {
					if i = validKey(b, i); i < 0 {
						return false
					}
				}
				break
			}
			if (obj && c == '}') || (!obj && c == ']') {
				st.pop()
				i++
				continue
			}
			return false
		}
	}
}

// maxNesting is encoding/json's maxNestingDepth.
const maxNesting = 10000

// nesting is the stack of open containers, one bit each (1: object). The
// first 64 levels live in a word; deeper ones in more, grown as needed.
type nesting struct {
	depth int
	low   uint64
	high  []uint64
}

func (n *nesting) push(obj bool) bool {
	if n.depth >= maxNesting {
		return false
	}
	d := n.depth
	n.depth++
	if d < 64 {
		n.low = n.low&^(1<<d) | b2u(obj)<<d
		return true
	}
	w := (d - 64) / 64
	if w == len(n.high) {
		n.high = append(n.high, 0)
	}
	bit := uint(d-64) % 64
	n.high[w] = n.high[w]&^(1<<bit) | b2u(obj)<<bit
	return true
}

func (n *nesting) pop() { n.depth-- }

// top reports whether the innermost open container is an object.
func (n *nesting) top() bool {
	d := n.depth - 1
	if d < 64 {
		return n.low>>d&1 == 1
	}
	return n.high[(d-64)/64]>>(uint(d-64)%64)&1 == 1
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// hasAt reports whether b holds lit at i.
func hasAt(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// validKey checks a member key and its colon starting at b[i], and returns
// the index of the member's value (after whitespace), or -1.
func validKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = validString(b, i); i < 0 {
		return -1
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return SkipSpace(b, i+1)
}

// strSpecial marks the bytes a string scan must stop at: the closing quote,
// the escape character and the control characters JSON forbids unescaped.
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// validString checks the string starting at b[i] == '"' and returns the
// index just past its closing quote, or -1.
func validString(b []byte, i int) int {
	i++
	for i < len(b) {
		c := b[i]
		if !strSpecial[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		}
		// An escape.
		if i+1 >= len(b) {
			return -1
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return -1
			}
			i += 6
		default:
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// validNumber checks the number starting at b[i] and returns the index
// just past it, or -1. What follows it is the caller's to check.
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i
}
