//! A brand-new project whose tests use svc-stub, as installed from a registry.
