"""The review page of the team server (/ui/): routes, views, sign-in and CSRF, templates."""
