// Package kubecfg changes the kubeconfig through client-go's loading
// rules and ModifyConfig, and by path with LoadFromFile and WriteToFile.
package kubecfg

import (
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/clientcmd/api"
)

func useContext(name string) error {
	po := clientcmd.NewDefaultPathOptions()
	cfg, err := po.GetStartingConfig()
	if err != nil {
		return err
	}
	cfg.CurrentContext = name
	return clientcmd.ModifyConfig(po, *cfg, true) // want `read-modify-write of the kubeconfig without a lock: read at line 12 \(po.GetStartingConfig\), written back here \(clientcmd.ModifyConfig\).*use client-go's lock, <file>.lock created exclusively, around clientcmd.LoadFromFile`
}

// Through the ConfigAccess interface, as kubectl's commands do.
func setNamespace(access clientcmd.ConfigAccess, ns string) error {
	cfg, err := access.GetStartingConfig()
	if err != nil {
		return err
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	return clientcmd.ModifyConfig(access, *cfg, true) // want `read-modify-write of the kubeconfig without a lock: read at line 22`
}

func renameByPath(path, from, to string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return err
	}
	cfg.Contexts[to] = cfg.Contexts[from]
	delete(cfg.Contexts, from)
	return clientcmd.WriteToFile(*cfg, path) // want `read-modify-write of path without a lock: read at line 31 \(clientcmd.LoadFromFile\)`
}

// The same with the write's error tested: the write's success does not
// make the read a failed one.
func renameChecked(path, from, to string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return err
	}
	cfg.Contexts[to] = cfg.Contexts[from]
	if err := clientcmd.WriteToFile(*cfg, path); err != nil { // want `read-modify-write of path without a lock: read at line 43 \(clientcmd.LoadFromFile\)`
		return err
	}
	return nil
}

// CONTROL: a kubeconfig made afresh, read nowhere in this function.
func create(path string) error {
	return clientcmd.WriteToFile(api.Config{Contexts: map[string]*api.Context{}}, path)
}

// CONTROL: ModifyConfig of a configuration made afresh.
func reset() error {
	return clientcmd.ModifyConfig(clientcmd.NewDefaultPathOptions(), api.Config{}, true)
}
