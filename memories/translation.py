"""django-modeltranslation: kind labels and descriptions in every dashboard language."""

from modeltranslation.translator import TranslationOptions, register

from memories.models import MemoryKind


@register(MemoryKind)
class MemoryKindTranslation(TranslationOptions):
    fields = ("label", "description")
