"""``make demo-k8s``: a whole BurnInRun on a Kubernetes cluster, shown with kubectl — on the
stand-in cluster (three nodes), so it runs on any machine."""
