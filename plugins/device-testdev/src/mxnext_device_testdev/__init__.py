"""The ``testdev`` device: numpy memory behind a second device type (see README)."""
