"""Event files under /console/api/."""

from django.urls import path

from redblue.porting import api

urlpatterns = [
    path("export", api.EventExportApi.as_view(), name="console-export"),
    path("export/schema", api.EventSchemaApi.as_view(), name="console-export-schema"),
    path("import", api.EventImportApi.as_view(), name="console-import"),
]
