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
	return fmt.Sprintf("%s is larger than the router's cap of %d bytes", e.what, e.limit)
}

// smallBuffers pool the buffers that streaming responses are copied
// through, synchronously, to the client.
var smallBuffers = sync.Pool{New: func() any { b := make([]byte, 0, smallBodyBytes); return &b }}

// smallBodyBytes is the size of a pooled copy buffer, and the largest body
// of known length a node that could stream reads first (see serve).
const smallBodyBytes = 32 << 10

// readCapped reads r to its end into memory, failing with errTooLarge past
// limit bytes, into first when it fits (or nil). length
// is the body's announced length, -1 when unknown. A known length is read
// into one allocation of that size. An unknown one is read into segments of
// growing size, never copied while it arrives, and joined once at its end:
// a body over the cap costs at most the cap before it is refused, and none
// costs the garbage of a buffer grown by copying.
func readCapped(r io.Reader, length, limit int64, what string, first []byte) ([]byte, error) {
	if length > limit {
		return nil, &errTooLarge{what: what, limit: limit}
	}
	if length >= 0 {
		data := first[:0]
		if int64(cap(first)) < length {
			data = make([]byte, 0, length)
		}
		data = data[:length]
		// net/http's readers end a body at its announced length.
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	if cap(first) == 0 {
		first = make([]byte, 0, minSegment)
	}
	segments := [][]byte{first[:0]}
	var total int64
	for {
		seg := segments[len(segments)-1]
		if len(seg) == cap(seg) {
			seg = make([]byte, 0, min(2*cap(seg), maxSegment))
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
	if len(segments) == 1 {
		return segments[0], nil
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
)
