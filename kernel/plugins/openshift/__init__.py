"""The plugins OpenShift's descheduler build (openshift/descheduler) registers beyond upstream's, one module each,
declared like upstream's (``PLUGINS`` tuples of :class:`~desched.plugins.base.Plugin`).

:data:`desched.plugins.DISTRIBUTIONS` adds them to upstream's registry as the ``openshift`` distribution; upstream's
:data:`~desched.plugins.REGISTRY` never holds them.
"""

from __future__ import annotations

# The build's registration order after upstream's plugins (pkg/descheduler/setupplugins.go: kubevirtplugins.Register),
# each module with the plugins it declares.
MODULES = (("kubevirtmigrationaware", ("KubevirtMigrationAware",)),)
