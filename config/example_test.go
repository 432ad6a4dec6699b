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

	fmt.Println(c.String("db.host"), c.Int("db.port"), c.Duration("db.timeout"))
	fmt.Println(c.Keys())
	// Output:
	// localhost 5432 30s
	// [db.host db.port db.timeout]
}

// Getters return copies: changing what they return changes nothing stored.
func ExampleConfig_Get() {
	c := config.New()
	_ = c.Set("limits", map[string]any{"cpu": 2})

	v, _ := c.Get("limits")
	v.(map[string]any)["cpu"] = 64

	fmt.Println(c.Int("limits.cpu"))
	// Output: 2
}

func ExampleConfig_Set_unsupported() {
	c := config.New()
	err := c.Set("hooks", map[string]any{"onStart": func() {}})
	fmt.Println(err)
	fmt.Println(errors.Is(err, config.ErrUnsupported), c.Has("hooks"))

	// What Save could not write is refused too.
	fmt.Println(c.Set("ratio", math.NaN()))
	// Output:
	// config: set hooks.onStart: unsupported value: unsupported type func()
	// true false
	// config: set ratio: unsupported value: NaN is not a finite number
}

func ExampleConfig_Lookup() {
	c := config.New()
	_ = c.Set("port", "eighty")

	var port int
	err := c.Lookup("port", &port)
	fmt.Println(errors.Is(err, config.ErrConversion))
	err = c.Lookup("missing", &port)
	fmt.Println(errors.Is(err, config.ErrNotFound))
	// Output:
	// true
	// true
}

func ExampleConfig_Snapshot() {
	c := config.New()
	_ = c.Set("mode", "blue")
	s := c.Snapshot()
	_ = c.Set("mode", "green")
	fmt.Println(s.String("mode"), c.String("mode"))
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
	v, _ := c.Get("port")
	fmt.Printf("%T %v %v %v\n", v, c.Int("port"), c.Float64("ratio"), c.Duration("poll"))
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

func ExampleConfig_Enabled() {
	c := config.New()
	c.Enable("new-ui")
	c.Enable("beta-api")
	fmt.Println(c.Enabled("new-ui"), c.Enabled("unknown"), c.EnabledFeatures())
	// Output: true false [beta-api new-ui]
}
