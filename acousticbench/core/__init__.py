"""The ground floor: types, errors, environment, audio and statistics every layer may use."""
