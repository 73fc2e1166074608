from django.urls import path

from notifications import views

urlpatterns = [
    path("unsubscribe/<str:token>/", views.unsubscribe, name="notifications-unsubscribe"),
    path("read/", views.mark_read, name="notifications-read"),
    path("header/", views.header_list, name="notifications-header"),
]
