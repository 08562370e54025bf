"""glimmer.api: pydantic models of the ``burnin.glimmer.ai/v1alpha1`` resources, their YAML/JSON
loading and dumping, and the CRDs generated from them.

Entry points for other layers:

* ``glimmer.api.load``: ``load_paths``, ``collect_paths``, ``load_text``, ``collect_text``,
  ``of_kind`` and the ``Loaded`` record (object, file, document number, field lines).
* ``glimmer.api.dump``: ``to_wire``, ``dump`` (YAML or JSON).
* ``glimmer.api.crd``: ``all_crds``, ``crd``, ``openapi_schema``.
* ``glimmer.api.pinned``: the pinned plan document and its annotation encoding.
* one module per kind: ``test``, ``profile``, ``run`` (+ ``result``), ``schedule``, ``sink``,
  ``fingerprint``; ``kinds`` maps apiVersion/kind to a model.
"""
