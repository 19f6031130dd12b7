package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// MaxMessage bounds one message from the server. A workspace/symbol answer
// of a large repository is a few megabytes; a message larger than this is a
// server gone wrong, and reading it would hold that much memory.
const MaxMessage = 256 << 20

// maxHeader bounds one header line.
const maxHeader = 4 << 10

// ResponseError is a JSON-RPC error answer.
type ResponseError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ResponseError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// JSON-RPC and LSP error codes a client sends or sees.
const (
	CodeMethodNotFound   = -32601
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeContentModified  = -32801
)

// message is any JSON-RPC message: a request has ID and Method, a
// notification Method alone, a response ID and Result or Error.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ResponseError  `json:"error,omitempty"`
}

// Handler answers what the server sends: Request returns the result of a
// request (or a *ResponseError), Notify takes a notification. Both run on
// the reading goroutine, in the order the server sent the messages, so
// they must not block on the connection.
type Handler interface {
	Request(method string, params json.RawMessage) (any, error)
	Notify(method string, params json.RawMessage)
}

// Conn is one JSON-RPC 2.0 connection with LSP's framing: each message is
// a Content-Length header, a blank line, and that many bytes of JSON.
type Conn struct {
	w       io.Writer
	wmu     sync.Mutex
	r       *bufio.Reader
	handler Handler
	trace   func(in bool, body []byte)

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *message
	err     error // why the connection ended
	done    chan struct{}
}

// NewConn starts reading r, answering what the server asks through h, and
// writes to w. Run the connection's life with Wait or Done.
// trace, when not nil, sees every message's body as it is read (in) or
// written.
func NewConn(r io.Reader, w io.Writer, h Handler, trace func(in bool, body []byte)) *Conn {
	c := &Conn{w: w, r: bufio.NewReaderSize(r, 64<<10), handler: h, trace: trace, pending: map[string]chan *message{}, done: make(chan struct{})}
	go c.read()
	return c
}

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (io.EOF: the server closed its output).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// ErrClosed is the error of a call on a connection that has ended.
var ErrClosed = errors.New("lsp: the connection to the server has ended")

// Call sends a request and decodes its result into result (unless nil).
// When ctx ends first, the request is cancelled ($/cancelRequest) and
// ctx's error returned.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%w: %v", ErrClosed, c.err)
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.write(&message{ID: json.RawMessage(id), Method: method}, params); err != nil {
		forget()
		return err
	}
	select {
	case m := <-ch:
		if m == nil {
			return fmt.Errorf("%w: %v", ErrClosed, c.Err())
		}
		if m.Error != nil {
			return m.Error
		}
		if result == nil || len(m.Result) == 0 {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("lsp: decoding the answer to %s: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		c.Notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)})
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.write(&message{Method: method}, params)
}

// write sends m with params encoded as its Params.
func (c *Conn) write(m *message, params any) error {
	m.JSONRPC = "2.0"
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("lsp: encoding %s: %w", m.Method, err)
		}
		m.Params = b
	}
	return c.send(m)
}

func (c *Conn) send(m *message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, 0, len(body)+32)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, body...)
	if c.trace != nil {
		c.trace(false, body)
	}
	if _, err := c.w.Write(buf); err != nil {
		return fmt.Errorf("%w: writing to the server: %v", ErrClosed, err)
	}
	return nil
}

// read dispatches every message until the stream ends or breaks.
func (c *Conn) read() {
	var err error
	for {
		var body []byte
		body, err = ReadMessage(c.r)
		if err != nil {
			break
		}
		if c.trace != nil {
			c.trace(true, body)
		}
		var m message
		if err = json.Unmarshal(body, &m); err != nil {
			err = fmt.Errorf("lsp: the server sent a message that is not JSON-RPC: %v", err)
			break
		}
		c.dispatch(&m)
	}
	c.mu.Lock()
	c.err = err
	pending := c.pending
	c.pending = map[string]chan *message{}
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- nil
	}
	close(c.done)
}

func (c *Conn) dispatch(m *message) {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		res, err := c.handler.Request(m.Method, m.Params)
		reply := &message{JSONRPC: "2.0", ID: m.ID}
		if err != nil {
			var re *ResponseError
			if !errors.As(err, &re) {
				re = &ResponseError{Code: CodeInternalError, Message: err.Error()}
			}
			reply.Error = re
		} else {
			b, merr := json.Marshal(res)
			if merr != nil {
				b = []byte("null")
			}
			reply.Result = b
		}
		c.send(reply)
	case m.Method != "":
		c.handler.Notify(m.Method, m.Params)
	default:
		id := string(m.ID)
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok {
			if m.Result == nil && m.Error == nil {
				m.Result = json.RawMessage("null")
			}
			ch <- m
		}
	}
}

// ReadMessage reads one framed message: headers up to a blank line, of
// which Content-Length is required (others, Content-Type, are ignored),
// then the body.
func ReadMessage(r *bufio.Reader) ([]byte, error) {
	length := -1
	for n := 0; ; n++ {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxHeader {
				return nil, errors.New("lsp: a header line from the server is too long")
			}
			if err == io.EOF && n == 0 && len(line) == 0 {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if n > 32 {
			return nil, errors.New("lsp: too many header lines from the server")
		}
		h := strings.TrimRight(string(line), "\r\n")
		if h == "" {
			break
		}
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("lsp: a header line from the server has no colon: %q", h)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || v < 0 {
				return nil, fmt.Errorf("lsp: bad Content-Length from the server: %q", value)
			}
			length = v
		}
	}
	if length < 0 {
		return nil, errors.New("lsp: a message from the server has no Content-Length")
	}
	if length > MaxMessage {
		return nil, fmt.Errorf("lsp: a message from the server of %d bytes is over the %d-byte limit", length, MaxMessage)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}
