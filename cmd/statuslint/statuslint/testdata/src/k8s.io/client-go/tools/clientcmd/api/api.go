// Package api stands for client-go's clientcmd/api in the test data: the
// kubeconfig's types, as much as the tests use.
package api

type Config struct {
	CurrentContext string              `json:"current-context"`
	Contexts       map[string]*Context `json:"contexts"`
}

type Context struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace,omitempty"`
}
