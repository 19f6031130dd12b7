module github.com/rowkit/rowkit

go 1.26.8

require (
	github.com/rogpeppe/go-internal v1.16.0
	github.com/tiktoken-go/tokenizer v0.10.0
)

require (
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
