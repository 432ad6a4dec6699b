// Package filestore is the file backend of package status: a document kept
// in a file, replaced atomically under an exclusive flock on the sidecar
// PATH.lock, and transactions over several such documents. It works on
// encoded bytes and knows nothing of what the documents hold; package
// status decodes them. What it guarantees is stated once, in package
// status's doc (Guarantees, Group commit, Transactions), and the file
// protocol other programs share with it in docs/PROTOCOL.md.
//
// # The engine
//
// Calls on one document in this process queue on its entry in a registry
// keyed by the document's absolute path; no goroutine is started. The
// request at the head of the queue holds the document's turn: it takes the
// lock file's flock, takes the calls queued behind it into its batch (up
// to 256, with the same options), reads the document once, hands each
// call's function the document as its predecessors left it to run on the
// call's own goroutine (handoff), writes once, and hands the turn to the
// next head. A transaction ([UpdateAll]) takes a turn on each of its
// documents, in the order of their paths, then their flocks in the order
// of the lock files' identities; the single-document calls and the
// transactions over a subset of its documents queued behind its turns join
// its commit. Package journal keeps the commit of two or more documents
// and the recovery that every locker runs first; package flock, the lock.
package filestore
