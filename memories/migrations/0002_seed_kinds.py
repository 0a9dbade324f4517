from django.db import migrations

# slug, weight, half-life days, {lang: (label, description)}
KINDS = [
    ("decision", 1.0, 3650, {
        "en": ("Decision", "A choice the team made, and why."),
        "es": ("Decisión", "Una elección que tomó el equipo, y por qué."),
        "de": ("Entscheidung", "Eine Entscheidung des Teams und ihre Begründung."),
        "fr": ("Décision", "Un choix fait par l'équipe, et pourquoi."),
        "ja": ("決定事項", "チームが下した選択とその理由。"),
    }),
    ("convention", 1.0, 3650, {
        "en": ("Convention", "How things are done here: naming, layout, style, process."),
        "es": ("Convención", "Cómo se hacen las cosas aquí: nombres, estructura, estilo, proceso."),
        "de": ("Konvention", "Wie hier gearbeitet wird: Benennung, Aufbau, Stil, Ablauf."),
        "fr": ("Convention", "Comment on fait ici : nommage, structure, style, processus."),
        "ja": ("規約", "ここでのやり方：命名、構成、スタイル、手順。"),
    }),
    ("preference", 1.0, 1825, {
        "en": ("Preference", "What a person likes or wants, in their own terms."),
        "es": ("Preferencia", "Lo que una persona prefiere o quiere, en sus propios términos."),
        "de": ("Vorliebe", "Was eine Person mag oder wünscht, in ihren eigenen Worten."),
        "fr": ("Préférence", "Ce qu'une personne aime ou souhaite, selon ses propres termes."),
        "ja": ("好み", "ある人が好むこと、望むこと。"),
    }),
    ("gotcha", 1.0, 1095, {
        "en": ("Gotcha", "A trap that cost time once and will again unless remembered."),
        "es": ("Trampa", "Un escollo que ya costó tiempo y volverá a costarlo si se olvida."),
        "de": ("Stolperfalle", "Eine Falle, die schon Zeit gekostet hat und es wieder tun wird."),
        "fr": ("Piège", "Un piège qui a déjà coûté du temps et en coûtera encore si on l'oublie."),
        "ja": ("落とし穴", "一度時間を取られ、覚えておかないとまた取られる罠。"),
    }),
    ("reference", 0.95, 1825, {
        "en": ("Reference", "Where something lives: a document, a dashboard, a runbook."),
        "es": ("Referencia", "Dónde está algo: un documento, un panel, un manual."),
        "de": ("Verweis", "Wo etwas zu finden ist: ein Dokument, ein Dashboard, ein Runbook."),
        "fr": ("Référence", "Où se trouve quelque chose : un document, un tableau de bord, un guide."),
        "ja": ("参照", "何かの所在：ドキュメント、ダッシュボード、手順書。"),
    }),
    ("fact", 0.9, 365, {
        "en": ("Fact", "Something true about the code, the system or the team."),
        "es": ("Hecho", "Algo cierto sobre el código, el sistema o el equipo."),
        "de": ("Fakt", "Etwas, das über den Code, das System oder das Team wahr ist."),
        "fr": ("Fait", "Quelque chose de vrai sur le code, le système ou l'équipe."),
        "ja": ("事実", "コード、システム、チームについての事実。"),
    }),
    ("episode", 0.7, 30, {
        "en": ("Episode", "What happened in a session or an incident."),
        "es": ("Episodio", "Lo que ocurrió en una sesión o un incidente."),
        "de": ("Episode", "Was in einer Sitzung oder bei einem Vorfall geschah."),
        "fr": ("Épisode", "Ce qui s'est passé pendant une session ou un incident."),
        "ja": ("出来事", "セッションやインシデントで起きたこと。"),
    }),
    ("task", 0.7, 14, {
        "en": ("Task", "Work still to be done."),
        "es": ("Tarea", "Trabajo pendiente."),
        "de": ("Aufgabe", "Noch zu erledigende Arbeit."),
        "fr": ("Tâche", "Travail encore à faire."),
        "ja": ("タスク", "まだ終わっていない作業。"),
    }),
    ("open_question", 0.7, 14, {
        "en": ("Open question", "A question nobody has answered yet."),
        "es": ("Pregunta abierta", "Una pregunta que nadie ha respondido todavía."),
        "de": ("Offene Frage", "Eine Frage, die noch niemand beantwortet hat."),
        "fr": ("Question ouverte", "Une question à laquelle personne n'a encore répondu."),
        "ja": ("未解決の質問", "まだ誰も答えていない質問。"),
    }),
]


def seed(apps, schema_editor):
    MemoryKind = apps.get_model("memories", "MemoryKind")
    for position, (slug, weight, half_life, texts) in enumerate(KINDS):
        fields = {"weight": weight, "half_life_days": half_life, "position": position}
        fields["label"], fields["description"] = texts["en"]
        for lang, (label, description) in texts.items():
            fields[f"label_{lang}"] = label
            fields[f"description_{lang}"] = description
        MemoryKind.objects.update_or_create(slug=slug, defaults=fields)


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
