package status

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Create stores v as the document under the lock, as [Mutate] does, if there
// is none yet, and returns it as stored (stamped, if T is a [Stamper]): of
// several creators exactly one succeeds; the others, and a Create over an
// existing document (even an empty or corrupt one), get [os.ErrExist].
func (s *Store[T]) Create(ctx context.Context, v T) (T, error) {
	var zero, result T
	if ctx == nil {
		return zero, fmt.Errorf("status: create %s: %w", s.b.Name(), errNilContext)
	}
	err := s.b.Update(ctx, func(cur []byte) ([]byte, error) {
		if cur != nil {
			return nil, fmt.Errorf("status: create %s: %w", s.b.Name(), os.ErrExist)
		}
		doc := v
		if st, ok := any(&doc).(Stamper); ok {
			st.Stamp(time.Now().UTC())
		}
		compact, err := s.codec.Marshal(&doc)
		if err != nil {
			return nil, fmt.Errorf("status: encode %s: %w", s.b.Name(), err)
		}
		out := s.codec.Encode(compact, nil)
		s.codec.Remember(out, &doc, nil, compact)
		result = doc
		return out, nil
	})
	if err != nil {
		return zero, err
	}
	return result, nil
}

// Create stores st as the status document at path, setting UpdatedAt, if
// there is none yet; see [Store.Create].
func Create(ctx context.Context, path string, st Status) (Status, error) {
	return NewStore[Status](path).Create(ctx, st)
}
