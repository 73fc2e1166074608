from django.urls import path

from redblue.teams import views

urlpatterns = [
    path("red-blue/", views.red_blue_list, name="red-blue-list"),
    path("red-blue/<str:challenge_id>/", views.red_blue_page, name="red-blue-page"),
]
