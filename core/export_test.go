package core

import "context"

// shutdown is stop without its first result, for tests of the task group
// alone.
func (g *taskGroup) shutdown(ctx context.Context) error {
	_, err := g.stop(ctx)
	return err
}
