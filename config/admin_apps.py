"""Django's admin app with our site (config/admin_site.py), which is imported only once the
models are loaded."""

from django.contrib.admin.apps import AdminConfig


class PlatformAdminConfig(AdminConfig):
    default_site = "config.admin_site.PlatformAdminSite"
