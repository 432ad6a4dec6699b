package config_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/agentstate/core/config"
)

func Example() {
	c := config.New()
	_ = c.Set("db", map[string]any{"host": "localhost", "port": 5432})
	_ = c.Set("db.timeout", "30s")

	s := c.Snapshot() // reads go through a snapshot
	fmt.Println(s.String("db.host"), s.Int("db.port"), s.Duration("db.timeout"))
	fmt.Println(s.Keys())
	// Output:
	// localhost 5432 30s
	// [db.host db.port db.timeout]
}

// Getters return copies: changing what they return changes nothing stored.
func ExampleSnapshot_Get() {
	c := config.New()
	_ = c.Set("limits", map[string]any{"cpu": 2})

	s := c.Snapshot()
	v, _ := s.Get("limits")
	v.(map[string]any)["cpu"] = 64

	fmt.Println(s.Int("limits.cpu"))
	// Output: 2
}

func ExampleConfig_Set_unsupported() {
	c := config.New()
	err := c.Set("hooks", map[string]any{"onStart": func() {}})
	fmt.Println(err)
	fmt.Println(errors.Is(err, config.ErrUnsupported), c.Snapshot().Has("hooks"))

	// What Save could not write is refused too.
	fmt.Println(c.Set("ratio", math.NaN()))
	// Output:
	// config: set hooks.onStart: unsupported value: unsupported type func()
	// true false
	// config: set ratio: unsupported value: NaN is not a finite number
}

func ExampleSnapshot_Lookup() {
	c := config.New()
	_ = c.Set("port", "eighty")

	var port int
	s := c.Snapshot()
	err := s.Lookup("port", &port)
	fmt.Println(errors.Is(err, config.ErrConversion))
	err = s.Lookup("missing", &port)
	fmt.Println(errors.Is(err, config.ErrNotFound))
	err = s.Lookup("db..port", &port)
	fmt.Println(err)
	// Output:
	// true
	// true
	// config: get db..port: invalid key: empty segment
}

func ExampleConfig_Snapshot() {
	c := config.New()
	_ = c.Set("mode", "blue")
	s := c.Snapshot()
	_ = c.Set("mode", "green")
	fmt.Println(s.String("mode"), c.Snapshot().String("mode"))
	// Output: blue green
}

func ExampleConfig_OnChange() {
	c := config.New()
	cancel := c.OnChange(func(ch config.Change) {
		fmt.Println(ch.Keys, ch.Old.Int("workers"), "->", ch.New.Int("workers"))
	}, "workers")
	defer cancel()

	_ = c.Set("workers", 4)
	_ = c.Set("workers", 4) // no change, no call
	_ = c.Set("other", 1)   // not watched
	_ = c.Set("workers", 8)
	// Output:
	// [workers] 0 -> 4
	// [workers] 4 -> 8
}

func ExampleConfig_Load() {
	c := config.New()
	_ = c.Load(strings.NewReader(`{"port": 8080, "ratio": 0.25, "poll": "5s"}`))
	s := c.Snapshot()
	v, _ := s.Get("port")
	fmt.Printf("%T %v %v %v\n", v, s.Int("port"), s.Float64("ratio"), s.Duration("poll"))
	// Output: int64 8080 0.25 5s
}

func ExampleConfig_Save() {
	c := config.New()
	_ = c.Set("b", map[string]any{"y": 1, "x": true})
	_ = c.Set("a", 2*time.Second)
	_ = c.Save(os.Stdout)
	// Output:
	// {
	//   "a": 2000000000,
	//   "b": {
	//     "x": true,
	//     "y": 1
	//   }
	// }
}

func ExampleSnapshot_Enabled() {
	c := config.New()
	c.Enable("new-ui")
	c.Enable("beta-api")
	s := c.Snapshot()
	fmt.Println(s.Enabled("new-ui"), s.Enabled("unknown"), s.EnabledFeatures())
	// Output: true false [beta-api new-ui]
}
