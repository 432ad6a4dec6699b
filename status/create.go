package status

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Create stores v as the document if there is none yet, and returns it as
// stored (stamped, if T is a [Stamper]). If a document exists, even an empty
// or corrupt one, Create changes nothing and returns an error matching
// [os.ErrExist] (errors.Is(err, fs.ErrExist) for io/fs).
//
// It takes the document's lock like [Mutate] and honours ctx the same way,
// so of several processes creating the same document exactly one succeeds.
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

// Create stores st as the status document at path if there is none yet;
// see [Store.Create]. It sets UpdatedAt. An existing document is left alone
// and the error matches [os.ErrExist]:
//
//	_, err := status.Create(ctx, path, status.Status{State: status.Queued, Task: task})
//	if errors.Is(err, os.ErrExist) {
//		// someone else created it first
//	}
func Create(ctx context.Context, path string, st Status) (Status, error) {
	return NewStore[Status](path).Create(ctx, st)
}
