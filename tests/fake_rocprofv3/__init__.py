"""The fake rocprofv3 used by the collection tests, and pytest helpers around it."""
