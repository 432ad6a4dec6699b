package formats_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
	"k8s.io/client-go/tools/clientcmd"

	corefs "github.com/agentstate/core/fs"
	statefile "github.com/agentstate/core/status"
)

// newFile creates a temporary directory with a file name holding content,
// and returns the file's path and a function that removes the directory.
func newFile(name, content string) (path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "formats")
	if err != nil {
		panic(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		panic(err)
	}
	return path, func() { os.RemoveAll(dir) }
}

func Example_viper() {
	path, cleanup := newFile("config.yaml", "profile: dev\nregion: us-east-1\n")
	defer cleanup()
	ctx := context.Background()

	// The command reads the file again under its lock, sets the value and
	// writes the document back with viper's own codec; a change another
	// process made since start-up is kept.
	err := statefile.Transform(ctx, path, func(cur []byte) ([]byte, error) {
		v := viper.New()
		v.SetConfigType("yaml")
		if err := v.ReadConfig(bytes.NewReader(cur)); err != nil {
			return nil, err // a file viper cannot read is left as it is
		}
		v.Set("region", "eu-west-1")
		return yaml.Marshal(v.AllSettings())
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	viper.Set("region", "eu-west-1") // the running program's copy, if it goes on
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// profile: dev
	// region: eu-west-1
}

// hosts is a YAML document of the round trip below.
type hosts struct {
	Hosts map[string]string `yaml:"hosts"`
}

func Example_yamlRoundTrip() {
	path, cleanup := newFile("hosts.yaml", "hosts:\n    api: https://api.example.com\n")
	defer cleanup()
	ctx := context.Background()

	err := statefile.Transform(ctx, path, func(cur []byte) ([]byte, error) {
		var h hosts
		if err := yaml.Unmarshal(cur, &h); err != nil {
			return nil, err
		}
		if h.Hosts == nil {
			h.Hosts = map[string]string{}
		}
		h.Hosts["web"] = "https://www.example.com"
		return yaml.Marshal(&h)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// hosts:
	//     api: https://api.example.com
	//     web: https://www.example.com
}

// release is a TOML document of the round trip below.
type release struct {
	Version int    `toml:"version"`
	Channel string `toml:"channel"`
}

func Example_tomlRoundTrip() {
	path, cleanup := newFile("release.toml", "version = 41\nchannel = 'stable'\n")
	defer cleanup()
	ctx := context.Background()

	err := statefile.Transform(ctx, path, func(cur []byte) ([]byte, error) {
		var r release
		if err := toml.Unmarshal(cur, &r); err != nil {
			return nil, err
		}
		r.Version++
		return toml.Marshal(r)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// version = 42
	// channel = 'stable'
}

const kubeconfig = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
contexts:
- name: dev
  context:
    cluster: c
- name: staging
  context:
    cluster: c
`

func Example_kubeconfig() {
	path, cleanup := newFile("config", kubeconfig)
	defer cleanup()

	// Under client-go's own lock (kubectl takes the same), read, change
	// and replace the file.
	unlock, err := lockKubeconfig(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer unlock()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, ok := cfg.Contexts["staging"]; !ok {
		fmt.Println("no context staging")
		return
	}
	cfg.CurrentContext = "staging"
	out, err := clientcmd.Write(*cfg)
	if err == nil {
		err = corefs.WriteAtomic(path, out, 0o600)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.CurrentContext)
	// Output:
	// staging
}

// lockKubeconfig takes the lock client-go and kubectl take on a kubeconfig:
// the file <path>.lock, created exclusively; unlock removes it.
func lockKubeconfig(path string) (unlock func(), err error) {
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	lock.Close()
	return func() { os.Remove(path + ".lock") }, nil
}
