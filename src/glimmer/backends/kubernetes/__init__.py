"""The Kubernetes substrate: today only the Pod a neutral execution request becomes."""
