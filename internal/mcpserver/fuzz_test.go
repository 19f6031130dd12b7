package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzGuardFrames: whatever arrives on stdin, the guard passes on only
// lines the SDK can decode as one JSON-RPC message, answers every other
// non-blank line with one JSON-RPC error, and never panics.
func FuzzGuardFrames(f *testing.F) {
	for _, seed := range []string{
		"this is not json\n",
		`{"jsonrpc":"2.0","id":3,"method":` + "\n",
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]` + "\n",
		`{"jsonrpc":"1.0","id":5,"method":"ping"}` + "\n",
		`{"id":6}` + "\n42\n\n  \r\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var pass, reply bytes.Buffer
		if err := guardFrames(strings.NewReader(in), &pass, &reply, func(string, ...any) {}); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(&pass)
		sc.Buffer(nil, MaxFrameBytes+1)
		passed := 0
		for sc.Scan() {
			passed++
			if _, err := jsonrpc.DecodeMessage(sc.Bytes()); err != nil {
				t.Errorf("passed on %q: %v", sc.Bytes(), err)
			}
		}
		replies := 0
		for _, l := range strings.Split(strings.TrimSuffix(reply.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			replies++
			var m struct {
				Error struct{ Code int64 } `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil || m.Error.Code == 0 {
				t.Errorf("reply %q is not a JSON-RPC error", l)
			}
		}
		nonBlank := 0
		for _, l := range strings.Split(in, "\n") {
			if strings.TrimSpace(l) != "" {
				nonBlank++
			}
		}
		if passed+replies != nonBlank {
			t.Errorf("%d lines in, %d passed and %d answered", nonBlank, passed, replies)
		}
	})
}
