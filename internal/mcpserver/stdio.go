package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrameBytes bounds one inbound JSON-RPC message on stdio.
const MaxFrameBytes = 8 << 20

// ServeStdio serves one client on newline-delimited JSON-RPC: in and out
// are the process's stdin and stdout. It returns when in ends or ctx is
// done; calls still running when ctx is done are cancelled (ripgrep, git
// and validations stopped), so the server ends at once.
//
// The SDK's stdio connection ends the session on the first line it cannot
// decode, so the frames pass through a guard first: a line that is too
// large, not JSON, a batch, or not a JSON-RPC message is answered with a
// JSON-RPC error and dropped, and the server goes on with the next line.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	s.setLife(ctx)
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(guardFrames(in, pw, w, s.logf))
	}()
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: MaxFrameBytes + 1})
	pr.Close()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// lockedWriter serialises the SDK's messages and the guard's replies: each
// is one Write of one line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// guardFrames copies the valid messages of in to pipe, one per line, and
// answers every invalid line on reply.
func guardFrames(in io.Reader, pipe io.Writer, reply io.Writer, logf func(string, ...any)) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		line = line[:0]
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !over {
				if len(line)+len(chunk) > MaxFrameBytes {
					over = true
					line = line[:0]
				} else {
					line = append(line, chunk...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if over {
			logf("dropped a message larger than %d bytes", MaxFrameBytes)
			rejectFrame(reply, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message larger than %d bytes", MaxFrameBytes))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if code, why, id := checkFrame(msg); code != 0 {
				logf("dropped an invalid message: %s", why)
				rejectFrame(reply, id, code, why)
			} else {
				if _, werr := pipe.Write(append(msg, '\n')); werr != nil {
					return werr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// checkFrame decides whether msg can go to the SDK; when not, it returns
// the JSON-RPC error code, why, and the request id when one is readable.
func checkFrame(msg []byte) (int64, string, json.RawMessage) {
	if !json.Valid(msg) {
		return jsonrpc.CodeParseError, "parse error: the message is not JSON", nil
	}
	if msg[0] != '{' {
		return jsonrpc.CodeInvalidRequest, "invalid request: a message must be one JSON object (batches are not supported)", nil
	}
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(msg, &head)
	id := head.ID
	if len(id) == 0 || !(id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		id = nil
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error(), id
	}
	return 0, "", nil
}

func rejectFrame(w io.Writer, id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	w.Write(append(b, '\n'))
}
