package router

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// errTooLarge is a body over its cap.
type errTooLarge struct {
	what  string
	limit int64
}

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("%s is larger than the cap of %d bytes", e.what, e.limit)
}

// smallBuffers pool the buffers that streaming responses are copied
// through, synchronously, to the client.
var smallBuffers = sync.Pool{New: func() any { b := make([]byte, 0, smallBodyBytes); return &b }}

// smallBodyBytes is the size of a pooled copy buffer, and the largest body
// of known length a node that could stream reads first (see serve).
const smallBodyBytes = 32 << 10

// readCapped reads r to its end into memory, failing with errTooLarge past
// limit bytes, into first when it fits (or nil). length is the body's
// announced length, -1 when unknown. Either way the body is read into
// segments that grow with the bytes received (an announced length only
// caps them), each taken from res before it is made, never copied while it
// arrives, and joined once at its end: a client that announces 64 MiB and
// sends one byte costs one small segment, a body over the cap costs at most
// the cap before it is refused, and none costs the garbage of a buffer
// grown by copying.
func readCapped(r io.Reader, length, limit int64, what string, first []byte, res *reservation) ([]byte, error) {
	if length > limit {
		return nil, &errTooLarge{what: what, limit: limit}
	}
	if cap(first) == 0 {
		size := int64(minSegment)
		if length >= 0 {
			// A body of known length up to knownSegment bytes is read
			// into one allocation of its size; a longer one starts there
			// and grows as its bytes come.
			size = min(length, knownSegment)
		}
		if err := res.take(size); err != nil {
			return nil, err
		}
		first = make([]byte, 0, size)
	}
	segments := [][]byte{first[:0]}
	var total int64
	for length < 0 || total < length {
		seg := segments[len(segments)-1]
		if len(seg) == cap(seg) {
			size := min(2*int64(max(cap(seg), minSegment/2)), maxSegment)
			if length >= 0 {
				// net/http's readers end a body at its announced length:
				// a last segment of what is left is enough.
				size = min(size, length-total)
			}
			if err := res.take(size); err != nil {
				return nil, err
			}
			seg = make([]byte, 0, size)
			segments = append(segments, seg)
		}
		n, err := r.Read(seg[len(seg):cap(seg)])
		segments[len(segments)-1] = seg[:len(seg)+n]
		if total += int64(n); total > limit {
			return nil, &errTooLarge{what: what, limit: limit}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if length >= 0 && total < length {
		return nil, io.ErrUnexpectedEOF
	}
	if len(segments) == 1 {
		return segments[0], nil
	}
	if err := res.take(total); err != nil {
		return nil, err
	}
	data := make([]byte, 0, total)
	for _, seg := range segments {
		data = append(data, seg...)
	}
	return data, nil
}

// The first and the largest segment of a body read without a length.
const (
	minSegment = 4 << 10
	maxSegment = 4 << 20
	// knownSegment is the first segment of a body of known length: what a
	// client that announces a length and sends nothing costs at most.
	knownSegment = 64 << 10
)
