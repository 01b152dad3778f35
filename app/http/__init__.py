"""What wraps every HTTP request: the guard (body caps, input screen, CSRF, rate limits,
security headers, request gate), observability (request ids, JSON logs, Prometheus metrics)
and the OpenAPI document as the API really behaves."""
