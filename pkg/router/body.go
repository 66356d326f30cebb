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

// smallBuffers pool the buffers of bodies that fit in pooledSize: nearly
// every request and response. Larger ones are allocated for the request
// and left to the collector, so the pool never pins a rare large body.
var smallBuffers = sync.Pool{New: func() any { b := make([]byte, 0, pooledSize); return &b }}

const pooledSize = 32 << 10

// readCapped reads r to its end into memory, failing with errTooLarge past
// limit bytes. length is the body's announced length, -1 when unknown. A
// known length is read into one allocation of that size. An unknown one is
// read into segments of growing size, never copied while it arrives, and
// joined once at its end: a body over the cap costs at most the cap before
// it is refused, and none costs the garbage of a buffer grown by copying.
// release gives a pooled buffer back; call it once the bytes are no
// longer used.
func readCapped(r io.Reader, length, limit int64, what string) (data []byte, release func(), err error) {
	release = func() {}
	if length > limit {
		return nil, release, &errTooLarge{what: what, limit: limit}
	}
	if length > pooledSize {
		data = make([]byte, length)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, release, err
		}
		// net/http's readers end a body at its announced length.
		return data, release, nil
	}
	p := smallBuffers.Get().(*[]byte)
	first := (*p)[:0]
	release = func() { *p = first[:0]; smallBuffers.Put(p) }
	segments := [][]byte{first}
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
			return nil, release, &errTooLarge{what: what, limit: limit}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, release, err
		}
	}
	if len(segments) == 1 {
		return segments[0], release, nil
	}
	data = make([]byte, 0, total)
	for _, seg := range segments {
		data = append(data, seg...)
	}
	return data, release, nil
}

// maxSegment is the largest segment of a body read without a length.
const maxSegment = 4 << 20
