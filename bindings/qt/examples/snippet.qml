// The README's QML snippet: a ListView over a FlatMappingsModel, in
// sections by group; tests/test_qml.cpp loads it and checks what it shows.
import QtQuick

ListView {
    required property var rows  // a ydbview::FlatMappingsModel, given from C++
    model: rows
    width: 320; height: 240
    section.property: "group"
    section.delegate: Text { required property string section; text: section; font.bold: true }
    delegate: Text {
        required property string key
        required property string objectText
        text: key + ": " + objectText
    }
}
