package status

import "context"

// Transform runs fn on the content of the document at path under the
// document's lock and commits what fn returns: [Mutate]'s protocol and
// guarantees (the package doc's Guarantees: the lock file, the durable
// replace, nothing written on fn's error or panic or when nothing
// changed, ctx) for a document of any format, which fn decodes and encodes
// with the caller's own codec (YAML, TOML, a kubeconfig).
//
// fn gets the content as read, nil if there is no document, and returns
// the new content; content equal to cur writes nothing, and so does nil
// when there is no document (nil for an existing one writes it empty).
// What is not valid in the document's format is fn's to refuse: a fn that
// returns its decoder's error leaves a document it cannot read as it is.
// fn must not change cur or keep it after it returns. [WithBackend],
// [WithPerm] and [WithMaxSize] apply as for [NewStore].
func Transform(ctx context.Context, path string, fn func(cur []byte) ([]byte, error), opts ...Option) error {
	switch {
	case fn == nil:
		return pathError("transform", path, errNilFunc)
	case ctx == nil:
		return pathError("transform", path, errNilContext)
	}
	return storeFor(path, collect(opts)).b.Update(ctx, func(cur []byte) ([]byte, error) {
		out, err := fn(cur)
		if err != nil {
			return nil, err
		}
		return keptDoc(cur, out), nil
	})
}

// TransformAll is [Transform] for several documents that one function
// changes all or nothing, as [MutateAll] does: fn gets their contents in
// the order of paths (nil for a missing one) and returns the new ones, one
// for each path. Every changed document is committed durably, or none is,
// also across a crash.
func TransformAll(ctx context.Context, paths []string, fn func(cur [][]byte) ([][]byte, error), opts ...Option) error {
	const op = "transform all"
	o := collect(opts)
	docs := make([]*store, len(paths))
	for i, p := range paths {
		s := storeFor(p, o)
		docs[i] = &s
	}
	names := storeNames(docs)
	switch {
	case fn == nil:
		return pathError(op, names, errNilFunc)
	case ctx == nil:
		return pathError(op, names, errNilContext)
	case len(docs) == 0:
		return nil
	}
	update, err := commitAll(op, docs)
	if err != nil {
		return pathError(op, names, err)
	}
	return update(ctx, func(cur [][]byte) ([][]byte, error) {
		out, err := fn(cur)
		if err != nil {
			return nil, err
		}
		if len(out) != len(cur) {
			return out, nil // UpdateAll refuses it
		}
		kept := make([][]byte, len(out))
		for i := range out {
			kept[i] = keptDoc(cur[i], out[i])
		}
		return kept, nil
	})
}

// keptDoc returns what fn's result out stores over cur: nil, which the
// engine takes for a removal, stands for an empty document when there is
// one.
func keptDoc(cur, out []byte) []byte {
	if out == nil && cur != nil {
		return []byte{}
	}
	return out
}
