module github.com/svc-stub/svc-stub/clients/go

go 1.21
