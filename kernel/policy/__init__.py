"""The policy as desched reasons about it: the typed model (:mod:`.model`), its effective v1alpha2 form however it
was written (:mod:`.effective`), the structural checker, namespace filters, and the published JSON Schemas."""
