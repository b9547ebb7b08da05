"""The OpenAPI schema ninja generates is valid and documents every endpoint."""
from __future__ import annotations

import pytest
from django.test import Client
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


def test_the_openapi_schema_is_valid(client: Client) -> None:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    validate(schema)
    assert {"/api/v1/projects", "/api/v1/projects/{project_id}/runs", "/api/v1/runs/{run_id}/report",
            "/api/v1/runs/{run_id}/report.md", "/api/v1/notebook/search"} <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["TokenAuth"] == {"type": "http", "scheme": "bearer"}
    assert "multipart/form-data" in schema["paths"]["/api/v1/projects"]["post"]["requestBody"]["content"]
