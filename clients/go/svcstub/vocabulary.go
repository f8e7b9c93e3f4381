package svcstub

// The words of svc-stub's control plane, as Go types. Each list is the stub's own
// (stub/openapi.json); a test checks them against it, so this file cannot drift.

// Mode is a fault mode.
type Mode string

// Every fault mode the stub has (FaultMode in the stub's OpenAPI document).
const (
	ModeDelay         Mode = "delay"
	Mode401           Mode = "401"
	Mode429           Mode = "429"
	Mode500           Mode = "500"
	ModeInvalidJSON   Mode = "invalid_json"
	ModeTruncated     Mode = "truncated"
	ModeQuotaLimited  Mode = "quota_limited"
	ModeStatus        Mode = "status"
	ModeReset         Mode = "reset"
	ModeEmptyResponse Mode = "empty_response"
	ModeSlowBody      Mode = "slow_body"
	ModeHang          Mode = "hang"
	// ModeNone lets one request through: a step of a sequence only.
	ModeNone Mode = "none"
)

// Modes lists every fault mode (not ModeNone), in the stub's order.
var Modes = []Mode{
	ModeDelay, Mode401, Mode429, Mode500, ModeInvalidJSON, ModeTruncated, ModeQuotaLimited,
	ModeStatus, ModeReset, ModeEmptyResponse, ModeSlowBody, ModeHang,
}

// Selector is what a fault applies to: a route, a management resource, or a group.
type Selector string

// Every selector (Selector in the stub's OpenAPI document).
const (
	OnAll           Selector = "all"
	OnRuntime       Selector = "runtime"
	OnVendor        Selector = "vendor"
	OnManagement    Selector = "management"
	OnEvaluate      Selector = "evaluate"
	OnCapture       Selector = "capture"
	OnRegister      Selector = "register"
	OnFlags         Selector = "flags"
	OnDefinitions   Selector = "definitions"
	OnBatch         Selector = "batch"
	OnWhoami        Selector = "whoami"
	OnProjects      Selector = "projects"
	OnEnvironments  Selector = "environments"
	OnControlPoints Selector = "control-points"
)

// Selectors lists every selector, in the stub's order.
var Selectors = []Selector{
	OnAll, OnRuntime, OnVendor, OnManagement, OnEvaluate, OnCapture, OnRegister, OnFlags,
	OnDefinitions, OnBatch, OnWhoami, OnProjects, OnEnvironments, OnControlPoints,
}

// Route is the name a request is recorded under in the journal, or a management resource
// (every one of its routes) when reading the journal.
type Route string

// Every route's name (RouteName in the stub's OpenAPI document).
const (
	RouteEvaluate           Route = "evaluate"
	RouteCapture            Route = "capture"
	RouteRegister           Route = "register"
	RouteFlags              Route = "flags"
	RouteDefinitions        Route = "definitions"
	RouteBatch              Route = "batch"
	RouteWhoami             Route = "whoami"
	RouteProjectsList       Route = "projects.list"
	RouteProjectsCreate     Route = "projects.create"
	RouteProjectsGet        Route = "projects.get"
	RouteProjectsUpdate     Route = "projects.update"
	RouteProjectsDelete     Route = "projects.delete"
	RouteEnvironmentsList   Route = "environments.list"
	RouteEnvironmentsCreate Route = "environments.create"
	RouteEnvironmentsGet    Route = "environments.get"
	RouteEnvironmentsUpdate Route = "environments.update"
	RouteEnvironmentsDelete Route = "environments.delete"
	RouteControlPointsList  Route = "control-points.list"
	RouteControlPointsGraph Route = "control-points.graph"
	RouteProjects           Route = "projects"       // every projects.* route
	RouteEnvironments       Route = "environments"   // every environments.* route
	RouteControlPoints      Route = "control-points" // every control-points.* route
	RoutePreflight          Route = "preflight"      // a browser's preflight: listed, but no client's request
	AnyRoute                Route = ""
)

// Routes lists every route's name, in the stub's order.
var Routes = []Route{
	RouteEvaluate, RouteCapture, RouteRegister, RouteFlags, RouteDefinitions, RouteBatch,
	RouteWhoami, RouteProjectsList, RouteProjectsCreate, RouteProjectsGet, RouteProjectsUpdate,
	RouteProjectsDelete, RouteEnvironmentsList, RouteEnvironmentsCreate, RouteEnvironmentsGet,
	RouteEnvironmentsUpdate, RouteEnvironmentsDelete, RouteControlPointsList,
	RouteControlPointsGraph,
}

// The headers that fault one request, and the one that names a request's namespace.
const (
	HeaderFault      = "X-Svc-Test-Fault"
	HeaderDelayMs    = "X-Svc-Test-Delay-Ms"
	HeaderStatus     = "X-Svc-Test-Status"
	HeaderRetryAfter = "X-Svc-Test-Retry-After"
	HeaderNamespace  = "X-Svc-Test-Namespace"
)
