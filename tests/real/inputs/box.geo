// gmsh: 3-D mesh of a unit box with a spherical hole (OpenCASCADE)
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Sphere(2) = {0.5, 0.5, 0.5, 0.3};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.CharacteristicLengthMax = 0.08;
