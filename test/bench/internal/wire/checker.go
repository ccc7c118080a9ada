package wire

import (
	"bytes"
	"strconv"
)

// Checker verifies the responses to repeated sends of one Call, cheaply.
//
// Every response is verified, but after a response has passed the full
// check (Extract + Verify), its body is remembered as a template with the
// request id cut out. A later body that is byte-for-byte the template with
// its own id in the same place is correct for the same reason the template
// was, and is accepted without decoding; any other body gets the full check.
// A Checker is not safe for concurrent use.
type Checker struct {
	Call *Call

	contentType    string
	prefix, suffix []byte
	have           bool

	Fast, Full int64 // responses accepted by template, by full check
	idBuf      []byte
}

// NewChecker returns a Checker for c, which must be prepared.
func NewChecker(c *Call) *Checker { return &Checker{Call: c} }

// Check verifies body (of the given content type) as the response to the
// checker's call sent with id.
func (k *Checker) Check(contentType string, body []byte, id int64) error {
	k.idBuf = strconv.AppendInt(k.idBuf[:0], id, 10)
	if k.have && contentType == k.contentType &&
		len(body) == len(k.prefix)+len(k.idBuf)+len(k.suffix) &&
		bytes.HasPrefix(body, k.prefix) &&
		bytes.Equal(body[len(k.prefix):len(k.prefix)+len(k.idBuf)], k.idBuf) &&
		bytes.HasSuffix(body, k.suffix) {
		k.Fast++
		return nil
	}
	msg, err := Extract(contentType, body, id)
	if err == nil {
		err = k.Call.Verify(msg, id)
	}
	if err != nil {
		return err
	}
	k.Full++
	k.learn(contentType, body)
	return nil
}

// learn makes body the template if the id occurs in it exactly once, as a
// whole number (not part of a longer run of digits).
func (k *Checker) learn(contentType string, body []byte) {
	i := bytes.Index(body, k.idBuf)
	if i < 0 || bytes.Contains(body[i+1:], k.idBuf) {
		k.have = false
		return
	}
	j := i + len(k.idBuf)
	if (i > 0 && isDigit(body[i-1])) || (j < len(body) && isDigit(body[j])) {
		k.have = false
		return
	}
	k.contentType = contentType
	k.prefix = append(k.prefix[:0], body[:i]...)
	k.suffix = append(k.suffix[:0], body[j:]...)
	k.have = true
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
