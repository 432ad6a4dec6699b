package status

import (
	"context"

	"github.com/agentstate/core/status/internal/filestore"
)

// QuarantineSuffix, the time in UTC and, if that name is taken, "-2",
// "-3"..., name the file that [Quarantine] moves a document to:
// status.json.corrupt-20260102T150405Z.
const QuarantineSuffix = filestore.QuarantineSuffix

// Quarantine moves the status document at path aside if it cannot be used;
// see [Store.Quarantine].
func Quarantine(ctx context.Context, path string) (moved string, err error) {
	return NewStore[Status](path).Quarantine(ctx)
}

// Quarantine moves the document aside if [Mutate] refuses it (a
// [*CorruptError] or [fs.ErrTooLarge]), so that work resumes from the zero T,
// and returns its new name ([QuarantineSuffix]); a document that decodes is
// left in place ("" and nil). The rename is durable, under the lock, never
// over another file; bytes, mode, owner and the lock file stay. Errors match
// [os.ErrNotExist], [fs.ErrNotRegular], or, off the file backend, [ErrUnsupported].
func (s *Store[T]) Quarantine(ctx context.Context) (moved string, err error) {
	name := s.b.Name()
	switch {
	case ctx == nil:
		return "", pathError("quarantine", name, errNilContext)
	case s.file == nil:
		return "", pathError("quarantine", name, unsupported("only the file backend quarantines"))
	}
	return s.file.Quarantine(ctx, func(doc []byte) bool {
		_, _, err := decode[T](s.codec, name, doc)
		return err == nil
	})
}
