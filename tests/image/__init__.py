"""The desched image built here without any registry (scripts/image): Debian bases, hash-locked wheels, buildah."""
