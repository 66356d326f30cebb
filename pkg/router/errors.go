package router

import (
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Error is a request the graph could not answer: the status it answers with
// and the node and step that failed. Clients get it as JSON:
//
//	{"error":"...","node":"root","step":"classifier"}
type Error struct {
	Status  int
	Node    string
	Step    string
	Message string
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter int
}

// Error is the message, naming the failing step when there is one.
func (e *Error) Error() string {
	msg := e.Message
	if e.Step != "" {
		msg = "step " + e.Step + ": " + msg
	}
	if e.Node != "" {
		msg = "node " + e.Node + ": " + msg
	}
	return msg
}

// JSON is the error as the body of a response.
func (e *Error) JSON() []byte {
	out := make([]byte, 0, 64+len(e.Message))
	out = append(out, `{"error":`...)
	out = appendJSONString(out, e.Error())
	if e.Node != "" {
		out = append(out, `,"node":`...)
		out = appendJSONString(out, e.Node)
	}
	if e.Step != "" {
		out = append(out, `,"step":`...)
		out = appendJSONString(out, e.Step)
	}
	return append(out, '}')
}

// reply is the error as a step's response: what a Soft step that failed
// contributes to its node.
func (e *Error) reply() *reply {
	return &reply{status: e.Status, contentType: "application/json", body: e.JSON()}
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var busy *errBusy
	if errors.As(err, &busy) {
		return busyError(busy)
	}
	return &Error{Status: http.StatusInternalServerError, Message: err.Error()}
}

// appendJSONString appends s as a JSON string.
func appendJSONString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				out = append(out, '\\', c)
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, `\u00`...)
				out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return append(out, '"')
}

// statusText is a status code with its text, for messages.
func statusText(code int) string {
	return strconv.Itoa(code) + " " + http.StatusText(code)
}
