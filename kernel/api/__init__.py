"""The policy API as data: Go types seen through JSON (:mod:`.types`) and the DeschedulerPolicy envelope per API
version (:mod:`.spec`). Plugins write their args with it; the policy model, the checker and the schemas read it."""
