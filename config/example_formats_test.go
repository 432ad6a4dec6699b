package config_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstate/core/config"
)

func ExampleConfig_LoadYAML() {
	c := config.New()
	err := c.LoadYAML(strings.NewReader(`
agents:
  dispatch:
    max_workers: 8
    since: 2026-01-02
`))
	fmt.Println(err)
	s := c.Snapshot()
	workers, _ := s.Get("agents.dispatch.max_workers")
	since, _ := s.Get("agents.dispatch.since")
	fmt.Printf("%T %T\n", workers, since)

	err = c.LoadYAML(strings.NewReader("ports:\n  80: http\n"))
	fmt.Println(err)
	// Output:
	// <nil>
	// int64 string
	// config: load: at ports: unsupported value: line 2: mapping key "80" is a YAML !!int, not a string (quote it)
}

func ExampleConfig_FromEnv() {
	c := config.New()
	_ = c.LoadYAML(strings.NewReader("dispatch:\n  max_workers: 4\n  timeout: 30s\n"))

	// Usually os.Environ(); variables override what the file said.
	env := []string{"AGENTS_DISPATCH__MAX_WORKERS=8", "AGENTS_DISPATCH__QUEUE=high"}
	if err := c.FromEnv("AGENTS", env); err != nil {
		fmt.Println(err)
	}
	s := c.Snapshot()
	workers, _ := s.Get("dispatch.max_workers")
	fmt.Printf("%#v %q %v\n", workers, s.String("dispatch.queue"), s.Duration("dispatch.timeout"))

	err := c.FromEnv("AGENTS", []string{"AGENTS_DISPATCH__MAX_WORKERS=many"})
	fmt.Println(err)
	// Output:
	// 8 "high" 30s
	// config: env AGENTS_DISPATCH__MAX_WORKERS: at dispatch.max_workers: cannot convert: want int64: invalid syntax
}

func ExampleDecode() {
	c := config.New()
	_ = c.LoadYAML(strings.NewReader(`
agents:
  dispatch:
    max_workers: 8
    timeout: 45s
    queues: [high, low]
`))
	type Dispatch struct {
		MaxWorkers int `config:"max_workers"`
		Timeout    time.Duration
		Queues     []string
	}
	s := c.Snapshot()
	d, err := config.Decode[Dispatch](s, "agents.dispatch")
	fmt.Printf("%+v %v\n", d, err)

	d.Queues[0] = "changed" // a copy: the config is unchanged
	fmt.Println(s.StringSlice("agents.dispatch.queues"))

	_, err = config.Decode[struct{ Timeout int }](s, "agents.dispatch")
	fmt.Println(err)
	// Output:
	// {MaxWorkers:8 Timeout:45s Queues:[high low]} <nil>
	// [high low]
	// config: decode agents.dispatch.timeout: cannot convert: string to int
}

// The whole configuration into one struct (viper's and koanf's Unmarshal).
func ExampleDecodeAll() {
	c := config.New()
	_ = c.LoadYAML(strings.NewReader(`
db: {host: localhost, port: 5432}
agents:
  dispatch: {max_workers: 8}
`))
	type Settings struct {
		DB struct {
			Host string
			Port int
		}
		Agents struct {
			Dispatch struct {
				MaxWorkers int `config:"max_workers"`
			}
		}
	}
	s, err := config.DecodeAll[Settings](c.Snapshot())
	fmt.Printf("%+v %v\n", s, err)
	// Output:
	// {DB:{Host:localhost Port:5432} Agents:{Dispatch:{MaxWorkers:8}}} <nil>
}

// A typo in a variable's name creates a new key by default, while the
// real one keeps the file's value; RejectUnknownKeys refuses it, naming the
// variable, and Decode with it names a key that no field takes.
func ExampleRejectUnknownKeys() {
	c := config.New()
	_ = c.LoadYAML(strings.NewReader("dispatch:\n  max_concurrent: 6\n"))
	env := []string{"FLEET_CONFIG=fleet.yaml", "FLEET_DISPATCH__MAX_CONCURENT=8"}

	err := c.FromEnv("FLEET", env, config.RejectUnknownKeys(), config.IgnoreEnv("FLEET_CONFIG"))
	fmt.Println(err)
	fmt.Println(errors.Is(err, config.ErrUnknownKey), c.Snapshot().Int("dispatch.max_concurrent"))

	type Dispatch struct {
		MaxConcurrent int `config:"max_concurrent"`
	}
	_ = c.FromEnv("FLEET", env, config.IgnoreEnv("FLEET_CONFIG")) // not strict: the typo is a key now
	_, err = config.Decode[Dispatch](c.Snapshot(), "dispatch", config.RejectUnknownKeys())
	fmt.Println(err)
	// Output:
	// config: env FLEET_DISPATCH__MAX_CONCURENT: at dispatch.max_concurent: unknown key: no key is stored there
	// true 6
	// config: decode dispatch.max_concurent: unknown key: no field of config_test.Dispatch takes it
}
