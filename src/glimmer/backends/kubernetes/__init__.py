"""The Kubernetes substrate: a cluster's API server as the engine's backend (:mod:`.backend`).

Nodes (:mod:`.nodes`), runner Pods and rendezvous Services (:mod:`.executions`, shaped by
:mod:`.podspec`, observed by :mod:`.pod_status`), the BurnInRun store (:mod:`.run_store`,
bodies by :mod:`.wire`), Events (:mod:`.events`), API errors as the engine's
(:mod:`.errors`), all over lightkube's synchronous client (:mod:`.client`).
"""
