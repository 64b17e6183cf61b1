"""Scans and photos made here: text rendered to an image with Pillow (DejaVu, Debian's
fonts-dejavu-core, else the font inside Pillow), optionally made noisy (grain, speckles, blur, a
slight rotation, JPEG artefacts), saved as PNG / JPEG / TIFF / WebP or wrapped as a PDF page. The
tests and the OCR bench (bench/files/ocr.py) read them; the bench's character error rate is
measured against the text drawn here."""

import io
import random
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps
from pypdf import PdfReader, PdfWriter

from tests.extract import samples

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
A4_INCHES = (8.27, 11.69)
MARGIN_INCHES = 0.9

ENGLISH = [
    "The harbour master counted forty-two boats moored at the eastern pier before noon.",
    "Our quarterly budget review found that travel costs rose by eleven percent.",
    "Please send the signed contract back to the office by the end of the month.",
    "A northern gale damaged the lantern on the old lighthouse during the night.",
    "The committee agreed to meet again on Thursday to discuss the garden plans.",
    "Invoice number 4711 covers the repair of the heating system in building C.",
    "Fresh bread, apples and cheese were sold at the weekly market in the square.",
    "The engineer replaced two valves and tested the pressure of every pipe.",
    "Minutes of the team meeting: the new schedule starts on the first of June.",
    "Children from the village school painted the fence along the river path.",
    "The library will close early on Friday because of the annual inventory.",
    "Her report describes the migration of birds along the coast in autumn.",
]
GERMAN = [
    "Die Brücke über den Fluss wurde im Frühjahr für den Verkehr gesperrt.",
    "Grüße aus München: Wir freuen uns auf Ihren Besuch im nächsten Monat.",
    "Der Bürgermeister eröffnete die Ausstellung über die Geschichte der Stadt.",
    "Bitte überweisen Sie den Betrag bis zum Fälligkeitsdatum auf unser Konto.",
    "Im Gebäude gibt es größere Schäden an der Heizung und an den Fenstern.",
    "Die Schüler übten für das Konzert in der Aula der alten Schule.",
    "Wegen des Sturms fielen die Fähren zur Insel am Dienstag aus.",
    "Das Protokoll der Sitzung enthält alle Beschlüsse des Ausschusses.",
]


def font(pixels: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in ("DejaVuSerif.ttf", "DejaVuSans.ttf"):
        if (DEJAVU / name).exists():
            return ImageFont.truetype(str(DEJAVU / name), pixels)
    return ImageFont.load_default(pixels)


def prose(seed: int, sentences: int = 24, german: bool = False) -> str:
    """Paragraphs of known sentences, in an order of the seed's."""
    pool = GERMAN if german else ENGLISH
    rng = random.Random(seed)
    chosen = [rng.choice(pool) for _ in range(sentences)]
    return "\n\n".join(" ".join(chosen[i : i + 3]) for i in range(0, len(chosen), 3))


def render(text: str, dpi: int = 300, points: float = 12, rotate: float = 0.0) -> Image.Image:
    """An A4 page (grayscale) with `text` set in paragraphs (blank lines) at `points`."""
    width, height = (round(side * dpi) for side in A4_INCHES)
    margin = round(MARGIN_INCHES * dpi)
    face = font(round(points * dpi / 72))
    line_height = round(points * 1.5 * dpi / 72)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    y = margin
    for paragraph in text.split("\n\n"):
        for line in _wrapped(paragraph, face, width - 2 * margin):
            draw.text((margin, y), line, font=face, fill=0)
            y += line_height
        y += line_height // 2
    if rotate:
        page = page.rotate(rotate, resample=Image.Resampling.BICUBIC, fillcolor=255)
    return page


def snippet(text: str, dpi: int = 300, points: float = 12) -> Image.Image:
    """Only the part of a rendered page that holds the text, with a margin (quicker to read)."""
    page = render(text, dpi, points)
    box = ImageOps.invert(page).getbbox() or (0, 0, page.width, page.height)
    margin = dpi // 4
    return page.crop((box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin))


def _wrapped(
    paragraph: str, face: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: int
) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in paragraph.split():
        candidate = f"{line} {word}".strip()
        if line and face.getlength(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line] if line else lines


def noisy(page: Image.Image, seed: int = 0, rotate: float = 1.5) -> Image.Image:
    """A page as a cheap scanner or a phone gives it: slightly rotated, blurred, grainy, with
    speckles, and through JPEG at a low quality."""
    rng = np.random.default_rng(seed)
    tilted = page.rotate(rotate, resample=Image.Resampling.BICUBIC, fillcolor=255)
    blurred = tilted.filter(ImageFilter.GaussianBlur(0.8))
    pixels = np.asarray(blurred, dtype=np.float32)
    pixels = pixels * 0.85 + 20  # grey paper, faded ink
    pixels += rng.normal(0, 18, pixels.shape)
    specks = rng.random(pixels.shape)
    pixels[specks < 0.004] = 0
    pixels[specks > 0.996] = 255
    grainy = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")
    return Image.open(io.BytesIO(encoded(grainy, "JPEG", quality=55)))


def encoded(image: Image.Image, format: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format, **options)
    return buffer.getvalue()


def image_pdf(pages: list[Image.Image], dpi: int = 300) -> bytes:
    """A PDF of scanned pages (Pillow's PDF writer: each page one image, no text layer)."""
    first, *rest = [page.convert("L") for page in pages]
    return encoded(first, "PDF", resolution=dpi, save_all=True, append_images=rest)


def mixed_pdf(pages: list[str | Image.Image]) -> bytes:
    """A PDF whose text pages have a text layer (samples.pdf) and whose image pages are scans."""
    writer = PdfWriter()
    for page in pages:
        data = samples.pdf([page]) if isinstance(page, str) else image_pdf([page])
        writer.add_page(PdfReader(io.BytesIO(data)).pages[0])
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()
