"""Reading the files desched is given: finding them (paths, folders, stdin, ignore globs, hostile bytes refused) and
YAML loaded with source positions under node and alias budgets (:mod:`.sources`, :mod:`.yamlsrc`)."""
