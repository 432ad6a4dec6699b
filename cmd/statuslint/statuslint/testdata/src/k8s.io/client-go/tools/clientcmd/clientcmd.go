// Package clientcmd stands for client-go's tools/clientcmd in the test
// data: the signatures of its kubeconfig loading and writing, which the
// analyzer knows by import path and name (its library table), not by these
// bodies.
package clientcmd

import "k8s.io/client-go/tools/clientcmd/api"

type ConfigAccess interface {
	GetLoadingPrecedence() []string
	GetStartingConfig() (*api.Config, error)
	GetDefaultFilename() string
}

type PathOptions struct{ GlobalFile string }

func NewDefaultPathOptions() *PathOptions { return &PathOptions{} }

func (o *PathOptions) GetLoadingPrecedence() []string          { return nil }
func (o *PathOptions) GetStartingConfig() (*api.Config, error) { return &api.Config{}, nil }
func (o *PathOptions) GetDefaultFilename() string              { return o.GlobalFile }

type ClientConfigLoadingRules struct{ ExplicitPath string }

func NewDefaultClientConfigLoadingRules() *ClientConfigLoadingRules {
	return &ClientConfigLoadingRules{}
}

func (r *ClientConfigLoadingRules) Load() (*api.Config, error) { return &api.Config{}, nil }

func ModifyConfig(access ConfigAccess, newConfig api.Config, relativizePaths bool) error { return nil }

func LoadFromFile(filename string) (*api.Config, error) { return &api.Config{}, nil }

func WriteToFile(config api.Config, filename string) error { return nil }
