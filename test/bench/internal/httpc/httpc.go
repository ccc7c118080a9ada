// Package httpc is a deliberately small HTTP/1.1 client for the load
// generator: one persistent connection per client, POST only, preformatted
// headers, reused buffers. It is far cheaper per request than net/http's
// client, so the load generator's own CPU cost stays low compared to the
// servers it measures. It understands Content-Length, chunked transfer
// coding and read-until-close bodies.
package httpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"
)

// Conn is a persistent HTTP/1.1 connection to one server. It is not safe for
// concurrent use.
type Conn struct {
	addr    string
	path    string
	timeout time.Duration

	c    net.Conn
	br   *bufio.Reader
	wbuf []byte
	body []byte
}

// Response is an HTTP response. Body is only valid until the next call to Do.
type Response struct {
	Status      int
	ContentType string
	SessionID   string // Mcp-Session-Id header
	Body        []byte
}

// New returns a connection to addr (HOST:PORT) posting to path. The TCP
// connection is made lazily and remade after errors. timeout bounds each
// request (0 means no bound).
func New(addr, path string, timeout time.Duration) *Conn {
	return &Conn{addr: addr, path: path, timeout: timeout}
}

// Close closes the underlying TCP connection, if any.
func (c *Conn) Close() error {
	if c.c == nil {
		return nil
	}
	err := c.c.Close()
	c.c, c.br = nil, nil
	return err
}

func (c *Conn) dial() error {
	nc, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.c = nc
	c.br = bufio.NewReaderSize(nc, 32<<10)
	return nil
}

// Do sends a POST with the given extra header lines (each terminated by CRLF)
// and body, and reads the response. On any error the connection is closed
// and will be remade by the next call.
func (c *Conn) Do(headers string, body []byte) (Response, error) {
	if c.c == nil {
		if err := c.dial(); err != nil {
			return Response{}, err
		}
	}
	if c.timeout > 0 {
		if err := c.c.SetDeadline(time.Now().Add(c.timeout)); err != nil {
			c.Close()
			return Response{}, err
		}
	}
	w := c.wbuf[:0]
	w = append(w, "POST "...)
	w = append(w, c.path...)
	w = append(w, " HTTP/1.1\r\nHost: "...)
	w = append(w, c.addr...)
	w = append(w, "\r\nUser-Agent: mcpbench\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	w = append(w, headers...)
	w = append(w, "Content-Length: "...)
	w = strconv.AppendInt(w, int64(len(body)), 10)
	w = append(w, "\r\n\r\n"...)
	w = append(w, body...)
	c.wbuf = w
	if _, err := c.c.Write(w); err != nil {
		c.Close()
		return Response{}, err
	}
	resp, keep, err := c.read()
	if err != nil || !keep {
		c.Close()
	}
	return resp, err
}

var (
	hContentLength    = []byte("content-length")
	hTransferEncoding = []byte("transfer-encoding")
	hConnection       = []byte("connection")
	hContentType      = []byte("content-type")
	hSessionID        = []byte("mcp-session-id")
)

// ErrMalformed reports an HTTP response the client could not parse.
var ErrMalformed = errors.New("malformed HTTP response")

func (c *Conn) read() (resp Response, keepAlive bool, err error) {
	return ReadResponse(c.br, &c.body)
}

// ReadResponse reads one HTTP/1.1 response from br. The body is read into
// *buf, which is grown as needed and reused. keepAlive reports whether the
// connection may carry another request.
func ReadResponse(br *bufio.Reader, buf *[]byte) (resp Response, keepAlive bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return resp, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return resp, false, fmt.Errorf("%w: status line %q", ErrMalformed, line)
	}
	keepAlive = line[7] == '1'
	resp.Status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return resp, false, fmt.Errorf("%w: status line %q", ErrMalformed, line)
	}
	contentLength := int64(-1)
	chunked := false
	for {
		line, err = readLine(br)
		if err != nil {
			return resp, false, err
		}
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return resp, false, fmt.Errorf("%w: header line %q", ErrMalformed, line)
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, hContentLength):
			contentLength, err = strconv.ParseInt(string(v), 10, 64)
			if err != nil || contentLength < 0 {
				return resp, false, fmt.Errorf("%w: content-length %q", ErrMalformed, v)
			}
		case bytes.EqualFold(k, hTransferEncoding):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, hConnection):
			if bytes.EqualFold(v, []byte("close")) {
				keepAlive = false
			} else if bytes.EqualFold(v, []byte("keep-alive")) {
				keepAlive = true
			}
		case bytes.EqualFold(k, hContentType):
			resp.ContentType = string(v)
		case bytes.EqualFold(k, hSessionID):
			resp.SessionID = string(v)
		}
	}
	b := (*buf)[:0]
	switch {
	case resp.Status == 204 || resp.Status == 304 || resp.Status/100 == 1:
	case chunked:
		b, err = readChunked(br, b)
	case contentLength >= 0:
		if int64(cap(b)) < contentLength {
			b = make([]byte, 0, contentLength)
		}
		b = b[:contentLength]
		_, err = io.ReadFull(br, b)
	default:
		// No framing: the body runs until the server closes the connection.
		keepAlive = false
		var rest []byte
		rest, err = io.ReadAll(br)
		b = append(b, rest...)
	}
	*buf = b
	resp.Body = b
	if err != nil {
		return resp, false, err
	}
	return resp, keepAlive, nil
}

func readChunked(br *bufio.Reader, b []byte) ([]byte, error) {
	for {
		line, err := readLine(br)
		if err != nil {
			return b, err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return b, fmt.Errorf("%w: chunk size %q", ErrMalformed, line)
		}
		if size == 0 {
			// Trailers, then the final CRLF.
			for {
				line, err = readLine(br)
				if err != nil {
					return b, err
				}
				if len(line) == 0 {
					return b, nil
				}
			}
		}
		n := len(b)
		b = slices.Grow(b, int(size))[:n+int(size)]
		if _, err := io.ReadFull(br, b[n:]); err != nil {
			return b, err
		}
		line, err = readLine(br)
		if err != nil {
			return b, err
		}
		if len(line) != 0 {
			return b, fmt.Errorf("%w: no CRLF after chunk", ErrMalformed)
		}
	}
}

// readLine returns the next line without its CRLF or LF. The slice is only
// valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: line too long", ErrMalformed)
		}
		if errors.Is(err, io.EOF) && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}
