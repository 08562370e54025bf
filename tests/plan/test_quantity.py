import pytest

from glimmer.plan.quantity import canonical_quantity


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("500Mi", "500Mi"),
        ("2048", "2048"),
        ("20000", "20k"),
        ("1e3", "1e3"),
        ("12e6", "12e6"),
        ("1.2345", "1234500u"),
        ("0.0000000001", "1n"),
        ("0Gi", "0"),
        ("-1Gi", "-1Gi"),
        ("512Ki", "512Ki"),
        ("0.5Ki", "512"),
        ("1E", "1E"),
        (8, "8"),
        (0.25, "250m"),
        ("not-a-quantity", "not-a-quantity"),
    ],
)
def test_quantities_are_written_in_canonical_form(
    written: str | int | float, canonical: str
) -> None:
    assert canonical_quantity(written) == canonical
